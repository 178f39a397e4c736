import unittest

from inventory.report import render
from inventory.stock import Stock, total


class StockTest(unittest.TestCase):
    def test_add_and_remove(self):
        s = Stock()
        s.add("bolt", 5)
        s.remove("bolt", 2)
        self.assertEqual(total(s), 3)

    def test_remove_too_many(self):
        s = Stock()
        s.add("nut", 1)
        with self.assertRaises(ValueError):
            s.remove("nut", 2)

    def test_render(self):
        s = Stock()
        s.add("nut", 2)
        s.add("bolt", 1)
        self.assertEqual(render(s), "bolt: 1\nnut: 2\ntotal: 3")


if __name__ == "__main__":
    unittest.main()
