from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Literal, Mapping, Optional, Sequence, Union

import pandas

class CommitlabError(ValueError): ...

def run(config: Optional[Mapping[str, Any]] = None, *, preset: Optional[str] = None) -> Dict[str, Any]: ...
def compare(
    config: Optional[Mapping[str, Any]] = None,
    *,
    protocols: Optional[Union[Iterable[str], str]] = None,
    preset: Optional[str] = None,
    jobs: int = 0,
    adapt: bool = True,
) -> pandas.DataFrame: ...
def sweep(
    grid: Mapping[str, Sequence[Any]],
    config: Optional[Mapping[str, Any]] = None,
    *,
    protocols: Optional[Union[Iterable[str], str]] = None,
    preset: Optional[str] = None,
    jobs: int = 0,
    adapt: bool = True,
    engine: Literal["local", "ray"] = "local",
) -> pandas.DataFrame: ...
def crash(
    config: Optional[Mapping[str, Any]] = None,
    *,
    schedules: Optional[int] = None,
    double: bool = False,
    preset: Optional[str] = None,
    min_states: Optional[int] = None,
    variants: bool = False,
    host: Optional[str] = None,
) -> pandas.DataFrame: ...
def reproduce(
    paper: str, *, quick: bool = True, jobs: int = 0, engine: Literal["local", "ray"] = "local"
) -> pandas.DataFrame: ...
@dataclass
class SoakResult:
    seed: int
    drawn: bool
    schedules: int
    states: int
    nested_states: int
    violations: int
    wall_s: float
    per_item: pandas.DataFrame
    failures: List[str]
    repeat: str
    state_file: str
    @property
    def ok(self) -> bool: ...

def soak(
    config: Optional[Mapping[str, Any]] = None,
    *,
    protocols: Optional[Union[Iterable[str], str]] = None,
    schedules: int = 10_000_000,
    minutes: Optional[float] = None,
    hosts: bool = False,
    seed: Optional[int] = None,
    draw_seed: bool = False,
    state_file: str = "soak.state.json",
    preset: Optional[str] = None,
) -> SoakResult: ...
def protocols() -> List[str]: ...
def presets() -> pandas.DataFrame: ...
def trace_stats(
    trace: str, config: Optional[Mapping[str, Any]] = None, *, preset: Optional[str] = None
) -> Dict[str, Any]: ...
def effective_config(
    config: Optional[Mapping[str, Any]] = None, *, preset: Optional[str] = None, main_job: bool = False
) -> Dict[str, Any]: ...
def explain(key: str) -> str: ...
def records_to_frame(records: List[Dict[str, Any]]) -> pandas.DataFrame: ...
