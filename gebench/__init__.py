"""gebench."""
