"""discovery=notifications: new files named by storage events in a queue, not by listings."""
