def add(a, b):
    return a + b


def is_positive(x):
    return x > 0
