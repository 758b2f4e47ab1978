"""The file formats pyfile reads and writes, and how one file split is read through them."""
