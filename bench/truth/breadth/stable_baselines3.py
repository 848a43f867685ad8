"""stable-baselines3: the policy of each algorithm (PPO/A2C, DQN, SAC, TD3, DDPG) over MLP, CNN and
dict observations and each action space, built from gymnasium spaces as the algorithm builds it
(`Algorithm.policy_aliases`), and the networks they are made of.

A spec: name -> (algorithm, policy alias, observation space, action space, policy keywords); or
for a part alone, name -> a factory of (model, inputs). Inputs: a batch of 4 observations
(`forward(obs, deterministic=False)`); critics also get actions. The gSDE policies' second train
call raises (eager too): their exploration matrix, drawn once by `reset_noise` (per rollout, in
the algorithms), keeps the graph the first backward frees; the first call's events stand.
"""
from __future__ import annotations

DIST = "stable-baselines3"
BATCH = 4
NET = dict(net_arch=[16, 16])


def _spaces():
    import numpy as np
    from gymnasium import spaces

    image = spaces.Box(0, 255, (3, 36, 36), np.uint8)
    return {
        "vec": spaces.Box(-1.0, 1.0, (6,), np.float32),
        "image": image,
        "discrete_obs": spaces.Discrete(5),
        "multibinary_obs": spaces.MultiBinary(4),
        "dict": spaces.Dict({"image": image, "vec": spaces.Box(-1.0, 1.0, (4,), np.float32), "id": spaces.Discrete(3)}),
        "discrete": spaces.Discrete(3),
        "box": spaces.Box(-1.0, 1.0, (2,), np.float32),
        "multidiscrete": spaces.MultiDiscrete([3, 2]),
        "multibinary": spaces.MultiBinary(3),
    }


# name -> (algorithm, policy alias, observation space, action space, keywords)
POLICIES = {
    "ppo_mlp_discrete": ("PPO", "MlpPolicy", "vec", "discrete", NET),
    "ppo_mlp_box": ("PPO", "MlpPolicy", "vec", "box", NET),
    "ppo_mlp_box_sde": ("PPO", "MlpPolicy", "vec", "box", dict(NET, use_sde=True)),
    "ppo_mlp_box_squash_sde": ("PPO", "MlpPolicy", "vec", "box", dict(NET, use_sde=True, squash_output=True, full_std=False)),
    "ppo_mlp_multidiscrete": ("PPO", "MlpPolicy", "vec", "multidiscrete", NET),
    "ppo_mlp_multibinary": ("PPO", "MlpPolicy", "vec", "multibinary", NET),
    "ppo_mlp_separate_nets": ("PPO", "MlpPolicy", "vec", "discrete", dict(net_arch=dict(pi=[16], vf=[16, 8]), share_features_extractor=False)),
    "ppo_mlp_discrete_obs": ("PPO", "MlpPolicy", "discrete_obs", "discrete", NET),
    "ppo_mlp_multibinary_obs": ("PPO", "MlpPolicy", "multibinary_obs", "box", dict(NET, normalize_images=False)),
    "ppo_cnn_discrete": ("PPO", "CnnPolicy", "image", "discrete", dict(NET, features_extractor_kwargs=dict(features_dim=32))),
    "ppo_cnn_box_separate": ("PPO", "CnnPolicy", "image", "box", dict(NET, share_features_extractor=False,
                                                                     features_extractor_kwargs=dict(features_dim=32))),
    "ppo_multi_input_discrete": ("PPO", "MultiInputPolicy", "dict", "discrete", dict(NET, features_extractor_kwargs=dict(cnn_output_dim=32))),
    "ppo_multi_input_box": ("PPO", "MultiInputPolicy", "dict", "box", dict(NET, features_extractor_kwargs=dict(cnn_output_dim=32))),
    "a2c_mlp_discrete": ("A2C", "MlpPolicy", "vec", "discrete", dict(NET, ortho_init=False)),
    "a2c_mlp_box_sde": ("A2C", "MlpPolicy", "vec", "box", dict(NET, use_sde=True, log_std_init=-1.0, use_expln=True)),
    "dqn_mlp": ("DQN", "MlpPolicy", "vec", "discrete", NET),
    "dqn_mlp_discrete_obs": ("DQN", "MlpPolicy", "discrete_obs", "discrete", NET),
    "dqn_cnn": ("DQN", "CnnPolicy", "image", "discrete", dict(NET, features_extractor_kwargs=dict(features_dim=32))),
    "dqn_multi_input": ("DQN", "MultiInputPolicy", "dict", "discrete", dict(NET, features_extractor_kwargs=dict(cnn_output_dim=32))),
    "sac_mlp": ("SAC", "MlpPolicy", "vec", "box", NET),
    "sac_mlp_sde": ("SAC", "MlpPolicy", "vec", "box", dict(NET, use_sde=True)),
    "sac_mlp_shared": ("SAC", "MlpPolicy", "vec", "box", dict(net_arch=dict(pi=[16], qf=[16, 16]), n_critics=3,
                                                             share_features_extractor=True)),
    "sac_cnn": ("SAC", "CnnPolicy", "image", "box", dict(NET, features_extractor_kwargs=dict(features_dim=32))),
    "sac_multi_input": ("SAC", "MultiInputPolicy", "dict", "box", dict(NET, features_extractor_kwargs=dict(cnn_output_dim=32))),
    "td3_mlp": ("TD3", "MlpPolicy", "vec", "box", NET),
    "td3_cnn": ("TD3", "CnnPolicy", "image", "box", dict(NET, features_extractor_kwargs=dict(features_dim=32))),
    "td3_multi_input": ("TD3", "MultiInputPolicy", "dict", "box", dict(NET, features_extractor_kwargs=dict(cnn_output_dim=32))),
    "ddpg_mlp": ("DDPG", "MlpPolicy", "vec", "box", dict(NET, n_critics=1)),
}


def _obs(space, batch=BATCH):
    """A batch of observations of `space`, as tensors (what `obs_as_tensor` hands the policy)."""
    import torch
    from gymnasium import spaces

    if isinstance(space, spaces.Dict):
        return {key: _obs(sub, batch) for key, sub in space.spaces.items()}
    samples = [space.sample() for _ in range(batch)]
    import numpy as np

    return torch.as_tensor(np.stack(samples) if not isinstance(space, spaces.Discrete) else np.array(samples))


def _parts(obs="vec"):
    """Networks the policies are made of, alone: name -> () -> (model, inputs); the critics and
    actors over the observation space `obs` (a key of `_spaces()`), through a flattening extractor."""
    import torch
    from stable_baselines3.common import torch_layers as tl
    from stable_baselines3.common.policies import ContinuousCritic
    from stable_baselines3.dqn.policies import QNetwork
    from stable_baselines3.sac.policies import Actor as SACActor
    from stable_baselines3.td3.policies import Actor as TD3Actor

    from gymnasium.spaces import flatdim

    sp = _spaces()
    vec, box, image, dict_space = sp[obs], sp["box"], sp["image"], sp["dict"]
    n = flatdim(vec)
    flat = lambda: tl.FlattenExtractor(vec)  # noqa: E731
    features = lambda: torch.randn(BATCH, 6, requires_grad=True)  # noqa: E731
    return {
        "NatureCNN": lambda: (tl.NatureCNN(image, features_dim=32), {"observations": _obs(image).float()}),
        "FlattenExtractor": lambda: (flat(), {"observations": features()}),
        "CombinedExtractor": lambda: (tl.CombinedExtractor(dict_space, cnn_output_dim=32),
                                      {"observations": _float_dict(_obs(dict_space), dict_space)}),
        "MlpExtractor": lambda: (tl.MlpExtractor(6, dict(pi=[16], vf=[16]), torch.nn.Tanh), {"features": features()}),
        "QNetwork": lambda: (QNetwork(vec, sp["discrete"], flat(), n, net_arch=[16]), {"obs": _obs(vec)}),
        "ContinuousCritic": lambda: (ContinuousCritic(vec, box, [16], flat(), n, n_critics=2),
                                     {"obs": _obs(vec), "actions": torch.rand(BATCH, 2)}),
        "sac.Actor": lambda: (SACActor(vec, box, [16], flat(), n), {"obs": _obs(vec), "deterministic": False}),
        "sac.Actor_sde": lambda: (SACActor(vec, box, [16], flat(), n, use_sde=True), {"obs": _obs(vec), "deterministic": True}),
        "td3.Actor": lambda: (TD3Actor(vec, box, [16], flat(), n), {"obs": _obs(vec)}),
    }


def _float_dict(obs, space):
    """Dict observations as the policy preprocesses them before its extractor (images scaled, ids one-hot)."""
    from stable_baselines3.common.preprocessing import preprocess_obs

    return preprocess_obs(obs, space)


def names():
    return sorted([*POLICIES, *_parts()])


# The models whose observations are not images, and the critics and actors alone: their
# `preprocess_obs` runs `is_image_space` on every call, whose value-range check reads the space's
# bounds through NumPy (a tensor under Dynamo) only for a 3-dimensional Box. The `image_obs` variant
# gives them an image observation space (uint8, 3 x 36 x 36, images normalized as the default
# does), which opens that check.
IMAGE_OBS_MODELS = [name for name, spec in POLICIES.items() if spec[2] != "image" and spec[2] != "dict"] + [
    "ContinuousCritic", "QNetwork", "sac.Actor", "sac.Actor_sde", "td3.Actor"]


def variants(Variant):
    """{model: {variant: Variant}} (models.VARIANTS)."""
    image_obs = Variant("an image observation space (uint8 3 x 36 x 36, normalized): the value-range check of "
                        "`is_image_space` in `preprocess_obs`", config=dict(obs="image", normalize_images=True))
    return {name: {"image_obs": image_obs} for name in IMAGE_OBS_MODELS}


def build(name, variant=None):
    import inspect

    import stable_baselines3 as sb3
    import torch

    torch.manual_seed(0)
    config = dict(variant.config) if variant else {}
    if name in POLICIES:
        algo, alias, obs, action, kwargs = POLICIES[name]
        obs = config.pop("obs", obs)
        kwargs = {**kwargs, **config}
        sp = _spaces()
        policy_class = getattr(sb3, algo).policy_aliases[alias]
        model = policy_class(sp[obs], sp[action], lambda _: 1e-3, **kwargs)
        for space in sp.values():
            space.seed(0)
        first = next(iter(inspect.signature(model.forward).parameters))  # `obs`, or `observation` (TD3)
        return model, {first: _obs(sp[obs]), "deterministic": False}
    return _parts(config.get("obs", "vec"))[name]()
