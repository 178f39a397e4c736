import corners.tricky, os.path as osp; import sys
if sys: from corners import sub
try: import json
except ImportError: json = None
def leaf(): return 1
