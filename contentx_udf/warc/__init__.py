"""Reading WARC files into rows: inputs, the record reader, header fields, payload decoding, sniffing."""
