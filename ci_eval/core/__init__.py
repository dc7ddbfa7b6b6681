"""The core: data in, data out. Nothing here reads files, starts processes or opens sockets."""
