def search(question, k)
    return []
