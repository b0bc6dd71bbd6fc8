"""Task uploads: stage definition files, check and preview them, then create or edit a task."""
