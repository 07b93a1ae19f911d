"""Pass plugins: finding, loading, registering and hot-reloading pass files, below the ``ge`` facade.

One module per concern; each imports only modules listed before it (and ``fusion._guard``)::

    descriptor   PassDescriptor, the pass kinds
    registry     PassRegistry, the process-global registry, registering_into()
    session      the hook session the runtime opens while pass code runs (HookSession, current())
    api          PassApi: the protocol the core calls on the pass-author API, provided by ``import gebench``
    scan         GE's scan rules: LoadItem, PassLoadError, scan(), split_pass_path()
    load         executing files and packages: load_one(), load_paths(), load_pass_plugins()
    changes      content digests and per-pass fingerprints
    watch        Watcher (reload on save)
    reload       PassSet, ReloadReport

The facade (``gebench.ge.passes``) adapts GE's names onto these: its decorators build descriptors and register
them into the targeted registry, ``ge.passes.bootstrap`` calls :func:`load.load_pass_plugins`.
``gebench.fusion.loader`` and ``gebench.fusion.reload`` re-export the old import paths.

This package imports none of its modules eagerly (``import gebench`` reaches :mod:`.api` and stays cheap).
"""
