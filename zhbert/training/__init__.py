"""Pretraining and fine-tuning on Hugging Face ``Trainer`` (no hand-written loop)."""
