"""bloomc: a Bloom filter with its hashing and bit operations in C."""

from bloomc.filter import BloomFilter, optimal_parameters

__all__ = ["BloomFilter", "optimal_parameters"]
__version__ = "0.4.0"
