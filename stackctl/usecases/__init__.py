"""What a user asks stackctl to do, as functions that return values and report progress as
events: the commands parse arguments, call one of these, and print what comes back."""
