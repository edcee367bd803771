"""What the benchmarks share: timing and result files, consumed capacity, a store on
DynamoDB Local, the peers the ordered merge is measured against."""
