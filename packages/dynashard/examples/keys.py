import random

from dynashard import build_key, calculated_shard, shard_keys, sharded_key
from dynashard.errors import UnknownShardValueError
from dynashard.keys import WeightedShards, random_shard, split_sharded_key

base = build_key("acct_1", "inc")  # 'acct_1#inc'
# xxh64("acct_1#inc:inc_2J9d") & 15
shard = calculated_shard(base, "inc_2J9d", 16)
pk = sharded_key(base, shard, 16)  # 'acct_1#inc#<shard>'
# what a reader fans out over
assert shard_keys(base, 4) == [f"acct_1#inc#{n}" for n in range(4)]
assert split_sharded_key(pk) == ("acct_1#inc", shard)

# hot values get more shards
by_state = WeightedShards({"CLOSED": 32, "OPEN": 8})
assert by_state.count_for("OPEN") == 8
try:
    # an unknown value is an error, never a default
    by_state.count_for("PENDING")
except UnknownShardValueError as error:
    print(f"refused: {error}")
# pass a random.Random to seed
assert 0 <= random_shard(8, random.Random(7)) < 8
print(f"{pk} is shard {shard} of 16")
