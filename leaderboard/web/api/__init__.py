"""The api blueprint: the JSON API and its OpenAPI document."""
