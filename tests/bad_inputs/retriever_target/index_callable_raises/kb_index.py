def manifest():
    raise ConnectionError('vector store unreachable')
