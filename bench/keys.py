"""Key-building throughput and shard distribution: xxh64 calculated shards vs md5 modulo.

Reproduce: ``make bench`` (or ``PYTHONPATH=layers/shared/python python -m bench.keys``).
The baseline is the AWS blog's calculated shard, ``md5(pk + sk) % count``, timed in the
same run on the same keys, so the ratios hold on any machine.
"""

from __future__ import annotations

import hashlib
from collections import Counter

from scipy.stats import chisquare

from bench.support.report import best_rate, recording_tables, save
from dynashard import build_key, calculated_shard, sharded_key

KEYS = 200_000
DISTRIBUTION_KEYS = 1_000_000
BASE = build_key("acct_2J9dTn4Qb1", "inc")
SORT_KEYS = [f"inc_{n:027d}" for n in range(KEYS)]


def md5_modulo_shard(pk: str, sk: str, shard_count: int) -> int:
    """The AWS Database Blog's calculated shard (0-based here)."""
    return int(hashlib.md5(f"{pk}{sk}".encode()).hexdigest(), 16) % shard_count


def _calculated() -> int:
    for sk in SORT_KEYS:
        calculated_shard(BASE, sk, 16)
    return KEYS


def _full_key() -> int:
    for sk in SORT_KEYS:
        sharded_key(BASE, calculated_shard(BASE, sk, 16), 16)
    return KEYS


def _md5() -> int:
    for sk in SORT_KEYS:
        md5_modulo_shard(BASE, sk, 16)
    return KEYS


def _md5_full_key() -> int:
    for sk in SORT_KEYS:
        f"{BASE}#{md5_modulo_shard(BASE, sk, 16)}"
    return KEYS


def distribution(shard_count: int) -> dict[str, float]:
    """Load of `DISTRIBUTION_KEYS` calculated shards: max/mean and the chi-square p-value."""
    loads = Counter(
        calculated_shard(BASE, f"inc_{n}", shard_count) for n in range(DISTRIBUTION_KEYS)
    )
    counts = [loads.get(shard, 0) for shard in range(shard_count)]
    mean = DISTRIBUTION_KEYS / shard_count
    return {
        "shards": shard_count,
        "max_over_mean": max(counts) / mean,
        "min_over_mean": min(counts) / mean,
        "chi_square_p_value": float(chisquare(counts).pvalue),
    }


def main() -> None:
    """Run the benchmark, print a Markdown table and save JSON results."""
    baseline = best_rate(_md5)
    calculated = best_rate(_calculated)
    full = best_rate(_full_key)
    md5_full = best_rate(_md5_full_key)
    spreads = [distribution(16), distribution(256)]
    print("| operation | keys/s | vs md5 % n |")
    print("|---|---:|---:|")
    print(f"| md5(pk+sk) % n (AWS blog baseline) | {baseline:,.0f} | 1.00x |")
    print(
        f"| calculated_shard (xxh64 & (n-1)) | {calculated:,.0f} | {calculated / baseline:.2f}x |"
    )
    print(f"| md5 full key, unchecked f-string | {md5_full:,.0f} | {md5_full / baseline:.2f}x |")
    print(f"| full sharded key (shard + checked build) | {full:,.0f} | {full / baseline:.2f}x |")
    print()
    print(f"| shards | max/mean | min/mean | chi-square p ({DISTRIBUTION_KEYS:,} keys) |")
    print("|---:|---:|---:|---:|")
    for spread in spreads:
        print(
            f"| {spread['shards']} | {spread['max_over_mean']:.4f} | "
            f"{spread['min_over_mean']:.4f} | {spread['chi_square_p_value']:.3f} |"
        )
    path = save(
        "keys",
        {
            "md5_keys_per_s": baseline,
            "calculated_keys_per_s": calculated,
            "full_key_keys_per_s": full,
            "md5_full_key_keys_per_s": md5_full,
            "distribution": spreads,
        },
    )
    print(f"\nsaved {path}; reproduce with: make bench")


if __name__ == "__main__":
    with recording_tables():
        main()
