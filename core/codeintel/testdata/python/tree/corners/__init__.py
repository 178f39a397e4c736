"""Hand-written corners for the tokenizer-aware extractor."""
from . import tricky
from .sub import leaf, missing
from .. import nowhere
