"""A catalog's own setup SQL: split into statements, guarded, and run into a namespace dbbench owns."""
