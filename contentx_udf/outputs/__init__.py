"""The layouts contentx writes, one module per output protocol, over the store of
:mod:`contentx_udf.runtime.store`: the extraction table (:mod:`.table`)."""
