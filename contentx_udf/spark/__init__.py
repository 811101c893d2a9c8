"""The Spark job and the WARC data source: config, inputs and tasks, worker rows, output commits, driver."""
