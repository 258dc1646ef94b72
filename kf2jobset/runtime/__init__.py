"""Runtime models: what pods look like under the v1 operator and under JobSet, and how to compare them."""
