"""The user's files: reading, loading into core objects, importing their code, git facts."""
