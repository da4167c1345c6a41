"""Named errors. Each message says what went wrong and what the user can do about it."""


class ConceptAgentError(Exception):
    """Base of every error this package raises on purpose."""


class ConfigError(ConceptAgentError):
    """A configuration file (skills, predicates, categories, prompts) is missing or malformed."""


class SceneError(ConceptAgentError):
    """A scene name is unknown or a scene file is malformed."""


class TaskFileError(ConceptAgentError):
    """A task suite or task file is malformed."""


class PDDLError(ConceptAgentError):
    """A PDDL formula does not parse, or uses unknown predicates, wrong arity or unbound variables."""


class InstructionError(ConceptAgentError):
    """An instruction is empty, too long, or cannot be turned into a goal."""


class LLMError(ConceptAgentError):
    """The language model could not be reached or kept failing after retries."""


class LLMReplyError(LLMError):
    """The language model answered, but the answer cannot be used."""


class PreconditionGenerationError(ConceptAgentError):
    """The language model did not produce valid preconditions for a skill after all retries."""
