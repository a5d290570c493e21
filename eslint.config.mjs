import tseslint from 'typescript-eslint';

export default tseslint.config(
    { ignores: ['dist/**', 'packages/*/dist/**', 'dist-bench/**', 'node_modules/**', 'data/**', 'test/fixtures/**', 'coverage/**'] },
    ...tseslint.configs.recommended,
    {
        rules: {
            '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
            'no-console': 'off',
            'prefer-const': 'error',
            'eqeqeq': ['error', 'always'],
            'no-var': 'error'
        }
    },
    {
        files: ['**/*.js', '**/*.cjs'],
        rules: { '@typescript-eslint/no-require-imports': 'off' }
    }
);
