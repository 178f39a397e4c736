"""Stock levels per item."""


class Stock:
    """Counts units of each item on hand."""

    def __init__(self):
        self.levels = {}

    def add(self, item, units):
        if units <= 0:
            raise ValueError("units must be positive")
        self.levels[item] = self.levels.get(item, 0) + units

    def remove(self, item, units):
        # TODO: reserve units before removing them
        have = self.levels.get(item, 0)
        if units > have:
            raise ValueError("not enough stock")
        self.levels[item] = have - units


def total(stock):
    return sum(stock.levels.values())
