"""Datasets: Parquet schemas, atomic versioned releases, the DuckDB catalog, exports."""
