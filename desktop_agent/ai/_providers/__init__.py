"""Provider adapters, one module per wire API; each imports its SDK lazily."""
