"""Plain-text stock reports."""

from inventory.stock import Stock, total


def render(stock: Stock) -> str:
    lines = [f"{item}: {units}" for item, units in sorted(stock.levels.items())]
    lines.append(f"total: {total(stock)}")
    return "\n".join(lines)
