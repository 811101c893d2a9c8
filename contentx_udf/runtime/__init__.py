"""The runtime both jobs run on, knowing no job: the driver's Java check, JVM launch and Spark session
(:mod:`.java`, :mod:`.class_archive`, :mod:`.session`), the Python workers' set-up
(:mod:`.worker_env`, which imports no driver code), and Spark actions from a driver thread
(:mod:`.background`)."""
