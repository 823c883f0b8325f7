"""Per-role advantage normalisation."""

from __future__ import annotations

import numpy as np
import pytest

from spade.rl.advantages import agent_advantages, designer_advantages


def test_agent_advantages_are_normalised_within_one_env() -> None:
    advantages = agent_advantages([1.0, 0.0, 1.0, 0.0])  # mean 0.5, std 0.5
    np.testing.assert_allclose(advantages, [1.0, -1.0, 1.0, -1.0], atol=1e-5)
    scaled = agent_advantages([0.9, 0.1, 0.5])
    assert scaled.mean() == pytest.approx(0.0, abs=1e-12)
    assert scaled.std() == pytest.approx(1.0, abs=1e-5)


def test_a_constant_group_or_a_lone_play_gets_zeros() -> None:
    np.testing.assert_array_equal(agent_advantages([0.1, 0.1, 0.1]), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(agent_advantages([0.7]), [0.0])
    np.testing.assert_array_equal(agent_advantages([]), [])


def test_masked_plays_get_zero_and_stay_out_of_the_statistics() -> None:
    returns = [1.0, 0.0, 0.0, 0.4]
    mask = [True, True, False, True]  # play 2 was truncated
    advantages = agent_advantages(returns, mask)
    assert advantages[2] == 0.0
    np.testing.assert_allclose(advantages[[0, 1, 3]], agent_advantages([1.0, 0.0, 0.4]))
    np.testing.assert_array_equal(agent_advantages([0.3, 0.9], [False, False]), [0.0, 0.0])
    # A masked play's (meaningless) return does not matter, even if it is not finite.
    np.testing.assert_array_equal(agent_advantages([1.0, float("nan")], [True, False]), [0, 0])


def test_agent_advantages_reject_bad_shapes() -> None:
    with pytest.raises(ValueError, match="mask has shape"):
        agent_advantages([1.0, 0.0], [True])
    with pytest.raises(ValueError, match="one-dimensional"):
        agent_advantages([[1.0, 0.0]])


def test_designer_advantages_are_centred_per_group_without_std_division() -> None:
    result = designer_advantages({"a": [1.0, 0.5, 0.0], "b": [0.2, 0.2], "c": [0.3, None, 0.5]})
    np.testing.assert_allclose(result["a"], [0.5, 0.0, -0.5])
    np.testing.assert_array_equal(result["b"], [0.0, 0.0])
    np.testing.assert_allclose(result["c"], [-0.1, 0.0, 0.1])  # None: no gradient
    # No std division: a tenfold spread gives tenfold advantages.
    small = designer_advantages({"g": [0.52, 0.48]})["g"]
    large = designer_advantages({"g": [0.7, 0.3]})["g"]
    np.testing.assert_allclose(large, 10 * small)
    np.testing.assert_array_equal(designer_advantages({"g": [None]})["g"], [0.0])
