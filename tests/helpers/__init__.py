"""What the tests share: builders of repositories, wheels, images and plans, and local GitHub and git servers."""
