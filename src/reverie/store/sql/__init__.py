"""The SQL both stores share, written once over a :class:`reverie.store.sql.dialect.Dialect`.

:class:`~reverie.store.sql.store.SQLStore` is the one implementation of the store contract;
:class:`~reverie.store.sqlite.SQLiteStore` and :class:`~reverie.store.postgres.PostgresStore`
add only their connection, how they assign ``seq`` and index text, and their search queries.
"""
