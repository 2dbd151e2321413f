# Writes the JSON Schema pydantic gives a tool's input model: nested models
# in $defs, Optional as anyOf with null, an Enum, Literals, a discriminated
# union, a dict, a tuple and a recursive model.
# Usage (pydantic 2.13): python3 sources/pydantic_models.py > pydantic_contact.json
import json
from enum import Enum
from typing import Literal, Optional, Union, Annotated
from pydantic import BaseModel, Field

class Priority(str, Enum):
    low = "low"
    high = "high"

class Address(BaseModel):
    """A postal address."""
    street: str
    city: str
    country: str = Field("NO", min_length=2, max_length=2, description="ISO 3166 code")

class Email(BaseModel):
    kind: Literal["email"] = "email"
    address: str = Field(pattern=r"^[^@]+@[^@]+$")

class Phone(BaseModel):
    kind: Literal["phone"] = "phone"
    number: str

class Contact(BaseModel):
    name: str = Field(description="Full name")
    age: Optional[int] = Field(None, ge=0, le=150)
    address: Optional[Address] = None
    priority: Priority = Priority.low
    mode: Literal["create", "upsert"] = "create"
    channel: Annotated[Union[Email, Phone], Field(discriminator="kind")]
    tags: list[str] = []
    extra: dict[str, int] = {}
    location: Optional[tuple[float, float]] = Field(None, description="lat, lon")
    manager: Optional["Contact"] = None

print(json.dumps(Contact.model_json_schema(), indent=1))
