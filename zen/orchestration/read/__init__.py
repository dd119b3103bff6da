"""Reading the home: the queue, job states, what `zen status` and `zen show` print."""
