from ..tricky import Outer as _Outer  # a relative import two levels up
from . import *
