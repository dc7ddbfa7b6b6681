"""The run artefact: its head, rows and checks, its size bound, the writer and the reader, the
columns a comparison reads it into, and a sharded run's parts and their merge."""
