"""What the blueprints share: request context, extensions, forms, filters."""
