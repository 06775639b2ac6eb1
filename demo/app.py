"""The Gradio demo over the bundled models: the same as ``zhbert demo``.

The app is package code (``zhbert/demo.py``: ``build_demo(models)`` takes any model
folders), so it also runs from an installed wheel; this script is its entry point
in a source checkout.
"""

from zhbert.demo import main

if __name__ == "__main__":
    main()
