"""What CoworkEnv adds to Airflow's API server (its plugin in plugins/ registers these): nothing here is imported by the
library, and every module imports only the standard library at module level (Airflow imports plugins in the
scheduler and the DAG processor too)."""
