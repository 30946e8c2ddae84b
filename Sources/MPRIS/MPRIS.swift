// MPRIS adapter (issue 3).
