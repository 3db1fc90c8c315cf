"""Buffer packing (dynamic storage allocation): offsets for buffers with
known lifetimes, under a capacity or at the least peak.

    from memfit.pack import read_csv, pack
    result = pack(read_csv("trace.csv"), capacity=1 << 20, time_limit=10)

packer: the packer's API over the C++ search, CSV files and ``memfit pack``;
instances: seeded hard instances; validate: an independent check of a packing.
"""
from .packer import (Buffer, CsvFormatError, PackResult, best_fit, max_live_bytes, pack,
                     parse_capacity, read_csv, write_csv)

__all__ = ["Buffer", "PackResult", "CsvFormatError", "read_csv", "write_csv",
           "parse_capacity", "pack", "best_fit", "max_live_bytes"]
