"""What a text or an episode says, read alike by the dream cycle and by recall.

Below both of them (and above :mod:`reverie.models` only): who speaks a turn
(:mod:`~reverie.text.turns`), the durable statements a speaker makes
(:mod:`~reverie.text.stated`), the facts an episode asserts (:mod:`~reverie.text.assertions`)
and free-text value slots (:mod:`~reverie.text.slots`). Pure functions of the text.
"""
