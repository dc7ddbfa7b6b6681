def manifest():
    return {'version': 'kb-1', 'ids': ['kb/account#reset', 17]}
