search = {'k': 5}
