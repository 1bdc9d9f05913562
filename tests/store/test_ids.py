"""Ids minted many under one lock (an import unit's relations, its pages and revisions) are ids like any other:
distinct, in the order they were made, after every id made before them and before every id made after."""

from __future__ import annotations

from store import ids


def test_ids_minted_together_are_distinct_and_ordered_among_the_ones_around_them():
    counts = (0, 1, 2, 500)
    made = [ids.new_id("rel")]
    for count in counts:
        made += ids.new_ids("rel", count)
        made.append(ids.new_id("rel"))
        made += [one for pair in ids.new_id_pairs("rel", "rel", count) for one in pair]
    assert len(made) == 1 + sum(3 * count + 1 for count in counts)
    assert len(set(made)) == len(made)
    assert made == sorted(made)
    assert all(one.startswith("rel_") and len(one) == len(made[0]) for one in made)
