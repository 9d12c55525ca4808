"""What a real model is asked: the facts of one answer, and the chat messages that ask for the task's JSON.

The toy model needs no prompt (it copies the task's reference answer); a real
model must be told what to write. Each answer gets its own facts: sample 0 the
task's reference facts ("Ada is 36 and has a cat"), every later sample a person
drawn from (seed, sample) by a generator of its own, so the sampler's draws are
untouched. At temperature 0 a real model writes the same answer to the same
prompt every time: varying the facts is what makes n greedy answers n answers.

Tasks whose facts never state the age (`strict_no_age`, `nullable_age`,
`json_mode`) leave it out of the text: the answer must invent one, or say null
where the schema lets it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from structbench.bench.tasks import NO_AGE_TASKS, Task

SYSTEM = "You reply with JSON only, on one line, with no other text."

NAMES = ("Ada", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal", "Ivy", "Jo", "Kai", "Lea", "Max", "Nia", "Otto",
         "Pia", "Quinn", "Rex", "Sam", "Tia", "Uma", "Vic", "Wes", "Zoe")
PETS = ((), ("cat",), ("dog",), ("cat", "dog"))
PETS_DESCRIPTION = '"pets" (a list of "cat" or "dog")'


@dataclass(frozen=True)
class Person:
    name: str
    age: int | None
    pets: tuple[str, ...]

    def sentence(self, lead: str | None = None) -> str:
        """'Ada is 36 and has a cat.'; without an age, 'Ada has a cat.'"""
        pets = {(): "no pets", ("cat",): "a cat", ("dog",): "a dog"}.get(self.pets, " and ".join(f"a {p}" for p in self.pets))
        who = lead or self.name
        return f"{who} is {self.age} and has {pets}." if self.age is not None else f"{who} has {pets}."


def _reference_people(task: Task) -> list[Person]:
    """The people of the task's reference answer (sample 0): what the toy model copies, told as facts."""
    if task.name in NO_AGE_TASKS:
        return [Person("Ada", None, ("cat",))]
    try:
        value = json.loads(task.reference)
    except ValueError:
        return []
    people = []
    while isinstance(value, dict):
        people.append(Person(str(value.get("name", "Ada")), value.get("age"), tuple(value.get("pets") or ())))
        value = value.get("child")
    return people


def facts_for(task: Task, seed: int, sample: int) -> list[Person]:
    """The people answer `sample` is about: the reference's for sample 0, drawn from (seed, sample) after."""
    depth = max(1, task.schema_depth)
    if sample == 0:
        people = _reference_people(task)
        if people:
            return people
    rng = np.random.default_rng([seed, sample, 20_250])  # a generator of its own: the sampler's draws are untouched
    names = rng.choice(len(NAMES), size=depth, replace=False)
    ages = rng.integers(1, 91, size=depth)
    pets = rng.integers(0, len(PETS), size=depth)
    no_age = task.name in NO_AGE_TASKS
    return [Person(NAMES[n], None if no_age else int(a), PETS[p]) for n, a, p in zip(names, ages, pets)]


def _person_keys(child: bool) -> str:
    keys = '"name" (a string), "age" (an integer)'
    if child:
        keys += ', "child" (the child, written the same way; the last one has no "child")'
    return f"with the keys {keys} and {PETS_DESCRIPTION}"


def instruction(task: Task, depth: int = 1) -> str:
    """What to write, keys in schema order: the part of the request every answer of the task shares."""
    if task.name == "age":
        return 'Write the person\'s age as JSON on one line: {"age": N} with N an integer. Reply with the JSON only.'
    if task.name == "nullable_age":
        return ('Write the person\'s age as JSON on one line, with the key "age": an integer, or null if the text '
                "does not say. Reply with the JSON only.")
    if task.name in ("person", "strict_no_age"):
        return f"Write the person as JSON on one line, {_person_keys(False)}. Reply with the JSON only."
    if task.name == "nested":
        return f"Write the first person as JSON on one line, {_person_keys(depth > 1)}. Reply with the JSON only."
    if task.name == "json_mode":
        return "Write the person as JSON on one line. Reply with the JSON only."
    # Any other task (a schema or pattern from a file): the shape; its reference answer gives the facts.
    shape = (f"this JSON Schema: {json.dumps(task.spec)}" if task.kind == "schema"
             else f"this regular expression: {task.spec}")
    return f"Write an answer that matches {shape}. Reply with the answer only."


def facts_text(task: Task, people: list[Person]) -> str:
    """The facts in words: 'Ada is 36 and has a cat.'"""
    if task.name not in ("age", "nullable_age", "person", "strict_no_age", "nested", "json_mode"):
        return f"The facts: {task.reference}"
    first = people[0] if people else Person("Ada", None, ())
    if task.name == "age":
        return f"{first.name} is {first.age}."
    facts = [first.sentence()]
    for parent, child in zip(people, people[1:]):
        facts.append(child.sentence(f"{parent.name}'s child is {child.name}, who"))
    return " ".join(facts)


SEPARATOR = "\n\n"


def user_message(task: Task, people: list[Person]) -> str:
    """The request: what to write, then the facts. The facts come last, so that every prompt of a task
    shares all that comes before them (a real model computes that part once)."""
    return instruction(task, len(people)) + SEPARATOR + facts_text(task, people)


def messages_for(task: Task, seed: int, sample: int) -> list[dict]:
    """The chat messages of one answer: a system line and the request."""
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": user_message(task, facts_for(task, seed, sample))}]


def shared_messages(task: Task) -> list[dict]:
    """The messages up to where the facts begin (with the separator): what every answer's prompt starts with."""
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": instruction(task, max(1, task.schema_depth)) + SEPARATOR}]


@dataclass(frozen=True)
class Prompts:
    """What a real model is asked for one task and seed (structbench.lm.real_model.SmolLM2Model takes one):
    each answer's messages, and the start they all share."""

    task: Task
    seed: int = 0

    def messages(self, sample: int) -> list[dict]:
        return messages_for(self.task, self.seed, sample)

    def shared(self) -> list[dict]:
        return shared_messages(self.task)
