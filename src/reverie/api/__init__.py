"""The conventional memory verbs and the async facade, over the one engine.

:mod:`reverie.api.items` holds the shapes the conventional verbs (``add``, ``search``, ``get``,
``get_all``, ``history``, ``delete``) return; :mod:`reverie.api.verbs` maps them onto scopes,
episodes and pages (the table is in docs/api.md). :mod:`reverie.runtime.aio` is
:class:`~reverie.runtime.aio.AsyncReverie`, which runs the same engine off the event loop
(docs/async.md). None of them decides anything the engine does not: they are a layer, not a
second engine.
"""
