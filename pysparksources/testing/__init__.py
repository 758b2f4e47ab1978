"""Development and test tooling shipped with the package (never needed in production)."""
