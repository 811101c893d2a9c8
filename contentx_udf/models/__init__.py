"""Model files shipped with the package (data only).

``combined.npz``: the block classifier of the ``combined`` method (``contentx train`` rebuilds it).
"""
