"""The trip demo behind `flowstate demo`: a scripted model plans a trip over a real memory."""
