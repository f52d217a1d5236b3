"""Unit tests of the deploy checks' own logic, on small fixtures (fixtures.py): standard library
unittest; Helm is never called, and there is no cluster. Run from the repository's root, with
PyYAML and jsonschema importable (deploy-checks.sh runs them in its virtualenv):

    python -m unittest discover -s .ci/deploy_checks/tests -t .ci
"""
