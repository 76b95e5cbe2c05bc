"""Alembic migrations of toolrun's database (run by `toolrun.database.migrate`)."""
